import { z } from "zod";
import { FileId } from "@gateway/contract";

/** What a visitor writes into their chat (docs/decisions/0122). */

export const WidgetMessageRequest = z
  .strictObject({ text: z.string().max(4096).optional(), file_id: FileId.optional() })
  .refine((b) => (b.text !== undefined && b.text.length > 0) || b.file_id !== undefined, "text or file_id is required");
export type WidgetMessageRequest = z.infer<typeof WidgetMessageRequest>;

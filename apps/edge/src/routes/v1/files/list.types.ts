import { z } from "zod";
import { listPageQuery } from "@gateway/contract";
import { NextCursor } from "../../page.js";
import { FileView } from "./files.types.js";

export const FileListQuery = z.object(listPageQuery({ item: "files", fallback: "the newest 100" }));
export type FileListQuery = z.infer<typeof FileListQuery>;
export const FileListResponse = z.object({ data: z.array(FileView), next_cursor: NextCursor });

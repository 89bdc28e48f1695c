import { z } from "zod";

/** The OpenAPI 3.1 document, as JSON. */
export const OpenApiDocument = z.record(z.string(), z.unknown());

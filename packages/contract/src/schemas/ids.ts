import { z } from "zod";
import { ID_PATTERN } from "../ids.js";

export { ID_PATTERN };

/** The contract's id characters without anchors, for patterns that embed an id (`ai-model:<alias>`). */
export const ID_PATTERN_BODY = ID_PATTERN.source.slice(1, -1);

/**
 * A path id or alias, and every id one service hands another (spec section 8):
 * 1-128 of A-Z a-z 0-9 _ - (the pattern ids are minted in, `@gateway/contract/ids`).
 */
export const Id = z.string().regex(ID_PATTERN, "must be 1-128 of A-Z a-z 0-9 _ -");

/** An id of the files service: `file_` and the rest of a contract id (128 characters in all). */
export const FILE_ID_PATTERN = /^file_[A-Za-z0-9_-]{1,123}$/;
export const FileId = z.string().regex(FILE_ID_PATTERN, "must be a file id of the files service (file_…)");

/**
 * An id chosen outside the gateway (a widget visitor, a conversation
 * participant's id on its channel): 1-128 of A-Z a-z 0-9 . _ : @ -, so that
 * emails and `provider:user` forms fit.
 */
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;
export const ExternalId = z.string().regex(EXTERNAL_ID_PATTERN, "must be 1-128 of A-Z a-z 0-9 . _ : @ -");

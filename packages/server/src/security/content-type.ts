import { HttpError } from "../http-error";

/** The media type of a `Content-Type` value, lower case, without parameters. */
export function mediaType(contentType: string | undefined | null): string | undefined {
  const t = contentType?.split(";")[0]?.trim().toLowerCase();
  return t || undefined;
}

/** `application/json` or a `+json` type (`application/merge-patch+json`). */
export function isJsonMediaType(type: string | undefined): boolean {
  return type === "application/json" || (type !== undefined && /^application\/[a-z0-9.+-]+\+json$/.test(type));
}

/**
 * Refuse (415) a JSON route's body unless it is declared `application/json`.
 * A browser page on another site can send `text/plain`, form-encoded and
 * multipart bodies, or a body with no type at all, without a CORS preflight;
 * it cannot send `application/json` without one. `hasBody` = the body is
 * not empty: an empty body without a type is fine (POST /skills/reload).
 */
export function assertJsonContentType(contentType: string | undefined | null, hasBody: boolean): void {
  const type = mediaType(contentType);
  if (type === undefined ? !hasBody : isJsonMediaType(type)) return;
  throw new HttpError(
    415,
    type === undefined
      ? "Unsupported Media Type: the request has a body but no Content-Type; send it as 'Content-Type: application/json'."
      : `Unsupported Media Type '${type}': this endpoint takes a JSON body sent as 'Content-Type: application/json'.`,
  );
}

/** Refuse (415) anything but `multipart/form-data` on an upload route. */
export function assertMultipart(contentType: string | undefined | null): void {
  const type = mediaType(contentType);
  if (type === "multipart/form-data") return;
  throw new HttpError(415, `Unsupported Media Type '${type ?? "(none)"}': uploads take multipart/form-data with the files in the field 'files'.`);
}

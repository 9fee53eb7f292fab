/** A raw HTTP/1.1 request with headers exactly as given (fetch would set `Host` and `Origin` itself). */
import http from "node:http";

/** Response of {@link rawRequest}. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Send one request to `url`'s host and port with these headers; `Host` defaults to the URL's. */
export function rawRequest(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname.replace(/^\[|\]$/g, ""),
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: init.method ?? "GET",
        headers: { ...(init.body !== undefined ? { "content-length": String(Buffer.byteLength(init.body)) } : {}), ...init.headers },
        setHost: !Object.keys(init.headers ?? {}).some((k) => k.toLowerCase() === "host"),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (init.body !== undefined) req.write(init.body);
    req.end();
  });
}

/** A multipart/form-data body with one file in the field `files`. */
export function multipartBody(filename: string, content: string): { body: Buffer; contentType: string } {
  const boundary = "----deerflowtestboundary7MA4YWxkTrZu0gW";
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
/**
 * `response` with `headers` set, each over any of the same name. Set one at a time: the
 * platform's `setHeaders` copies the response's headers twice through objects of a slow shape,
 * on every response the service sends.
 */
export const withHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  headers: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse => {
  let answer = response
  for (const name in headers) answer = HttpServerResponse.setHeader(answer, name, headers[name] as string)
  return answer
}

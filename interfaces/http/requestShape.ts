import { hasControlCharacter } from "../../domain/Text.js"

/**
 * Rules on the raw shape of a request, checked before anything decodes it: pure functions over
 * text, so that they are tested without HTTP.
 */

/** JSON nested deeper than this is refused before it is parsed or decoded. */
export const MAX_JSON_DEPTH = 32

/** A fault of a JSON body's shape: too deeply nested, or holding a NUL character. */
export type JsonShapeFault = "too deep" | "NUL character"

const HEX4_ZERO = "0000"

/**
 * Scans a JSON text once, outside and inside its strings: its nesting depth (objects and
 * arrays) and whether a string holds an escaped NUL (a raw one is not valid JSON anyway).
 * Nothing downstream needs a NUL, and a database may refuse one as a fault of its own, which
 * would look like an outage; deep nesting costs every recursive step after it.
 */
export const jsonShapeFault = (text: string): JsonShapeFault | undefined => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    if (inString) {
      if (char === 0x5c /* \ */) {
        if (text[i + 1] === "u" && text.slice(i + 2, i + 6) === HEX4_ZERO) return "NUL character"
        i++
      } else if (char === 0x22 /* " */) {
        inString = false
      }
      continue
    }
    if (char === 0x22) inString = true
    else if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      depth++
      if (depth > MAX_JSON_DEPTH) return "too deep"
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) depth--
  }
  return undefined
}

/**
 * The path of a request target as sent: what precedes its query or fragment, without the scheme
 * and host of an absolute target. Never throws, whatever the target (`new URL` does on `//%7F`).
 */
export const targetPath = (url: string) => url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").split(/[?#]/, 1)[0] ?? ""

/**
 * Whether a request path, its escapes decoded, holds a control character: no route parameter
 * takes one, and passed on to a store it could only fail there.
 */
export const pathHasControlCharacter = (url: string) => {
  const path = targetPath(url)
  try {
    return hasControlCharacter(decodeURIComponent(path))
  } catch {
    return hasControlCharacter(path)
  }
}

/**
 * A validation message as a client may read it: the rule broken, never the value sent.
 * Effect's messages end with `, actual <value>`; that part goes.
 */
export const withoutActualValue = (message: string) => message.replace(/,\s*actual\s[\s\S]*$/, "")

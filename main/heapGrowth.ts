import { setFlagsFromString } from "node:v8"

/**
 * How far V8 lets the old generation grow past what survived its last full collection before the
 * next one: 1.5 times. V8's own factor rises to 4 when collections are cheap, which on a serving
 * process (a small live heap, most of a request's garbage dying young but some promoted) lets
 * the heap grow to several times what is live: memory taken and kept for garbage. At 1.5 the
 * old generation is collected sooner, which costs little: a full collection of a small heap is
 * cheap and mostly concurrent.
 */
export const HEAP_GROWING_PERCENT = 50

const FLAG = "--heap-growing-percent"

/**
 * Sets the serving process's heap growth, unless its operator gave node one on the command line
 * (`node --heap-growing-percent=N …`), whose choice stands. Answers whether it set it.
 */
export const boundHeapGrowth = (
  execArgv: ReadonlyArray<string> = process.execArgv,
  set: (flags: string) => void = setFlagsFromString
): boolean => {
  if (execArgv.some((argument) => argument.replaceAll("_", "-").startsWith(FLAG))) return false
  set(`${FLAG}=${HEAP_GROWING_PERCENT}`)
  return true
}

/** Whether a text holds a control character (U+0000–U+001F, U+007F): no identifier of the service takes one. */
export const hasControlCharacter = (text: string) => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

/**
 * Text for a terminal: what it would act on rather than show (escape sequences, carriage returns,
 * every control character but line feed and tab) as U+FFFD. A mail may quote what a caller sent
 * (a security notice names the client's user agent).
 */
export const printable = (text: string) => text.replace(/(?![\n\t])\p{Cc}/gu, "\ufffd")

/** `&`, `<`, `>` and quotes escaped: text safe in an HTML element or a quoted attribute. */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c)

/**
 * Runs tasks one at a time under a name: across every tab and worker of the origin with the Web
 * Locks API (navigator.locks), else within this JavaScript realm only. A refresh spends its
 * refresh token, so two at once with one token would be taken by the service for theft (reuse
 * detection ends the session); one after the other, the second sends the token the first got.
 */
export const exclusive = (name: string) => {
  let tail: Promise<unknown> = Promise.resolve()
  const local = <A>(task: () => Promise<A>): Promise<A> => {
    const run = tail.then(task, task)
    tail = run.catch(() => undefined)
    return run
  }
  return <A>(task: () => Promise<A>): Promise<A> => {
    // Web Locks exist in secure contexts only (https, localhost): elsewhere, the realm's own queue.
    const locks = typeof navigator === "undefined" ? undefined : (navigator.locks as LockManager | undefined)
    return locks === undefined ? local(task) : (locks.request(name, { mode: "exclusive" }, task) as Promise<A>)
  }
}

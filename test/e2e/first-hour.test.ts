import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cleanEnv, freePort, killAll, readingDotenv, root, startServer } from "../support/processes.js"

/**
 * docs/first-hour.md as a reader goes through it: every shell block, in order, in one folder of
 * its own (under the checkout, so that `npx portcullis` and `jose` resolve as they do there).
 * `sh` blocks run in one shell, which keeps their variables; `sh server` is `npm start` (the
 * service, from that folder, reading its .env) and `sh receiver` a process of its own. Each
 * `text` block after a command is its whole output, line for line, `…` standing for what differs
 * from run to run; a server's or receiver's shows lines of its output, in order. The service's
 * 8000 and the receiver's 9000 are taken as free ports of this machine.
 */

interface Block {
  readonly kind: "sh" | "text"
  readonly role: string
  readonly body: string
}

const guide = () => readFileSync(join(root, "docs/first-hour.md"), "utf8")

const blocks = (text: string): ReadonlyArray<Block> =>
  [...text.matchAll(/^```(sh|text)(?: (\w+))?\n([\s\S]*?)^```$/gm)].map(([, kind, role, body]) => ({
    kind: kind as "sh" | "text",
    role: role ?? "",
    body: body ?? ""
  }))

/** A shown line as a pattern: `…` is anything, the rest literal. */
const pattern = (line: string) =>
  new RegExp(
    `^${line
      .split("…")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`
  )

/** Whether `lines` hold the shown lines in order (each shown line matching one of them). */
const holdsInOrder = (lines: ReadonlyArray<string>, shown: ReadonlyArray<string>) => {
  let at = 0
  for (const line of shown) {
    while (at < lines.length && !pattern(line).test(lines[at] ?? "")) at++
    if (at === lines.length) return false
    at++
  }
  return true
}

const linesOf = (text: string) => text.replace(/\n$/, "").split("\n")

/** One bash for the `sh` blocks: each block's output (stdout and stderr, as a terminal shows them) and status. */
const shell = (cwd: string) => {
  const child = spawn("bash", ["--noprofile", "--norc"], {
    cwd,
    env: cleanEnv({ ...readingDotenv }),
    stdio: ["pipe", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  let count = 0
  const run = async (script: string) => {
    const mark = `@@block-${++count}-done@@`
    const start = output.length
    // Its own stderr joins its stdout in order; the mark says where the block ends and how.
    child.stdin.write(`{\n${script}\n} 2>&1\necho "${mark} $?"\n`)
    const deadline = Date.now() + 60_000
    while (!output.includes(mark, start)) {
      if (Date.now() > deadline)
        throw new Error(`the block did not end within 60 s:\n${script}\n${output.slice(start)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const end = output.indexOf(mark, start)
    const status = Number(
      output
        .slice(end + mark.length)
        .trim()
        .split("\n")[0]
    )
    return { output: output.slice(start, end), status }
  }
  return { run, stop: () => child.kill("SIGKILL") }
}

/** A process of its own for `sh receiver`, its output kept. */
const background = (script: string, cwd: string) => {
  const child: ChildProcess = spawn("bash", ["-c", script], { cwd, env: cleanEnv({}), stdio: "pipe" })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  return { output: () => output, stop: () => child.kill("SIGKILL") }
}

/** Polls until `lines()` hold the shown lines in order, or fails with what was there. */
const eventually = async (lines: () => ReadonlyArray<string>, shown: ReadonlyArray<string>, what: string) => {
  const deadline = Date.now() + 30_000
  while (!holdsInOrder(lines(), shown)) {
    if (Date.now() > deadline) expect({ what, output: lines() }).toEqual({ what, output: shown })
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const stops: Array<() => void> = []
let folder = ""

afterAll(async () => {
  for (const stop of stops) stop()
  await killAll()
  if (folder !== "") await rm(folder, { recursive: true, force: true })
})

describe("docs/first-hour.md", () => {
  it("works as written: start, see a mail, sign in by its link, grant a permission, verify with the JWKS, receive a webhook", {
    timeout: 240_000
  }, async () => {
    const [port, receiverPort] = [await freePort(), await freePort()]
    const text = guide().replaceAll("8000", String(port)).replaceAll("9000", String(receiverPort))
    const all = blocks(text)
    expect(all.filter((block) => block.kind === "sh").length).toBeGreaterThanOrEqual(8)

    mkdirSync(join(root, ".cache"), { recursive: true })
    folder = mkdtempSync(join(root, ".cache", "first-hour-"))
    const bash = shell(folder)
    stops.push(bash.stop)
    let server: Awaited<ReturnType<typeof startServer>> | undefined
    let receiver: ReturnType<typeof background> | undefined
    let last: { readonly role: string; readonly output: string } | undefined
    const seen: Array<string> = []

    for (const [index, block] of all.entries()) {
      if (block.kind === "sh" && block.role === "server") {
        // `npm start` builds (done: the test run's global setup) and serves, here with the folder's .env.
        expect(block.body.trim()).toBe("npm start")
        server = await startServer({ ...readingDotenv }, { cwd: folder, port })
        last = { role: "server", output: "" }
      } else if (block.kind === "sh" && block.role === "receiver") {
        receiver = background(block.body, folder)
        stops.push(receiver.stop)
        last = { role: "receiver", output: "" }
        // Listening before the next block names it.
        const deadline = Date.now() + 10_000
        while ((await fetch(`http://127.0.0.1:${receiverPort}/`).catch(() => undefined)) === undefined) {
          if (Date.now() > deadline) throw new Error(`the receiver is not listening:\n${receiver.output()}`)
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        // That probe was a request too, which the receiver printed: its shown lines are a subsequence.
      } else if (block.kind === "sh") {
        const ran = await bash.run(block.body)
        expect({ block: block.body, status: ran.status }).toEqual({ block: block.body, status: 0 })
        last = { role: "", output: ran.output }
        // A command shown with no output printed none.
        if (all[index + 1]?.kind !== "text")
          expect({ block: block.body, output: ran.output }).toEqual({ block: block.body, output: "" })
      } else {
        const shown = linesOf(block.body)
        const role = block.role === "" ? last?.role : block.role
        seen.push(role ?? "")
        if (role === "server") {
          if (server === undefined) throw new Error("an output of the server before it started")
          const running = server
          await eventually(() => linesOf(running.output()), shown, "the server's output")
        } else if (role === "receiver") {
          if (receiver === undefined) throw new Error("an output of the receiver before it started")
          const listening = receiver
          await eventually(() => linesOf(listening.output()), shown, "the receiver's output")
        } else {
          // A command's whole output, line for line.
          const lines = linesOf(last?.output ?? "")
          expect({ lines: lines.length, block: block.body }).toEqual({ lines: shown.length, block: block.body })
          lines.forEach((line, index) => {
            expect(line).toMatch(pattern(shown[index] ?? ""))
          })
        }
      }
    }
    // Every kind of output was held: the server's, the commands', the receiver's.
    expect(new Set(seen)).toEqual(new Set(["server", "", "receiver"]))
  })
})

// argon2id as every server in the run uses it (m=19 MiB, t=2, p=1): hashes per second with 1, 2
// and 4 hashes in flight. It bounds what register and login can reach on this machine.
import { hash } from "@node-rs/argon2"
import { argon } from "./targets/floorContract.mjs"

const seconds = Number(process.env.BENCH_ARGON2_SECONDS ?? 3)

const measure = async (concurrency) => {
  const deadline = performance.now() + seconds * 1000
  let hashes = 0
  const loop = async () => {
    while (performance.now() < deadline) {
      await hash("correct horse battery staple", argon)
      hashes++
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, loop))
  return { concurrency, hashes_per_second: Math.round((hashes / (performance.now() - started)) * 100_000) / 100 }
}

const results = []
for (const concurrency of [1, 2, 4]) results.push(await measure(concurrency))
console.log(`BENCH_RESULT ${JSON.stringify(results)}`)

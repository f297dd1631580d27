import { expect } from "@effect/vitest"

/** Prometheus text as its samples: `name{label="value",...}` (labels sorted by name) to value. */
export type Samples = ReadonlyMap<string, number>

const seriesKey = (name: string, labels: Readonly<Record<string, string>>) => {
  const parts = Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([label, value]) => `${label}="${value}"`)
  return parts.length === 0 ? name : `${name}{${parts.join(",")}}`
}

/** Parses the text exposition format (0.0.4); fails the test on a line that is neither comment nor sample. */
export const parseSamples = (text: string): Samples => {
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line)
    expect(sample, `not a sample line: ${line}`).not.toBeNull()
    const [, name = "", labelText = "", value = ""] = sample ?? []
    const labels = Object.fromEntries(
      [...labelText.matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map(([, label = "", text = ""]) => [label, text])
    )
    samples.set(seriesKey(name, labels), Number(value))
  }
  return samples
}

/** A series' value; 0 when it has none yet (a counter not yet incremented). */
export const sampleOf = (samples: Samples, name: string, labels: Readonly<Record<string, string>> = {}) =>
  samples.get(seriesKey(name, labels)) ?? 0

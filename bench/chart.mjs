// The run at a glance: a panel per route, a bar per server (req/s, each panel on its own scale),
// labelled with req/s and p99.

const panels = [
  { route: "register", title: "POST /register (8 connections)" },
  { route: "login", title: "POST /login (8 connections)" },
  { route: "me", title: "GET /me (50 connections)" },
  { route: "refresh", title: "POST /refresh (50 connections)" },
  { route: "me under logins", title: "GET /me while logins saturate the hash threads" }
]

const colours = {
  floor: "#6b7280",
  "better-auth": "#d97706",
  effect: "#7c3aed",
  portcullis: "#2563eb"
}
const colourOf = (target) =>
  target.startsWith("portcullis")
    ? colours.portcullis
    : target.startsWith("effect")
      ? colours.effect
      : (colours[target] ?? "#111827")

const xml = (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/**
 * The bars of a panel: the route itself, and the Effect references' lean one beside it (for /me,
 * their static route too; the floor's static route, several times any other bar, is in the JSON).
 */
const barsOf = (results, route) =>
  results.filter(
    (result) =>
      typeof result.requests_per_second === "number" &&
      (result.route === route ||
        result.route === `lean ${route}` ||
        (route === "me" && result.route === "static" && result.target.startsWith("effect")))
  )

export const chart = (report) => {
  const width = 900
  const barHeight = 18
  const labelWidth = 300
  const barSpace = width - labelWidth - 190
  let y = 40
  const parts = [
    `<text x="10" y="22" font-size="15" font-weight="bold">Portcullis ${xml(report.date.slice(0, 10))}: ${xml(report.machine.cores)} cores, Node ${xml(report.machine.node)}, ${xml(report.load.seconds)} s per load</text>`
  ]
  for (const panel of panels) {
    const bars = barsOf(report.results, panel.route)
    if (bars.length === 0) continue
    const max = Math.max(...bars.map((bar) => bar.requests_per_second))
    parts.push(`<text x="10" y="${y + 14}" font-size="13" font-weight="bold">${xml(panel.title)}</text>`)
    y += 22
    for (const bar of bars) {
      const length = Math.max(1, Math.round((bar.requests_per_second / max) * barSpace))
      const name = bar.route === panel.route ? bar.target : `${bar.target}: ${bar.route}`
      parts.push(
        `<text x="10" y="${y + 13}" font-size="12">${xml(name)}</text>`,
        `<rect x="${labelWidth}" y="${y}" width="${length}" height="${barHeight - 4}" fill="${colourOf(bar.target)}"/>`,
        `<text x="${labelWidth + length + 6}" y="${y + 13}" font-size="12">${xml(bar.requests_per_second.toLocaleString("en"))} req/s · p99 ${xml(bar.p99_ms.toFixed(1))} ms</text>`
      )
      y += barHeight
    }
    y += 12
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 10}" font-family="sans-serif" role="img" aria-label="Benchmark results">
<rect width="100%" height="100%" fill="white"/>
${parts.join("\n")}
</svg>
`
}

import { existsSync } from "node:fs"
import { chromium } from "playwright-core"

/** Debian's Chromium: never a downloaded browser. */
export const CHROMIUM = "/usr/bin/chromium"

/**
 * Whether a browser suite runs: with Chromium present, or when CI requires it
 * (TEST_REQUIRE_CHROMIUM=1, .ci/run installs it), which turns a skip into a failure. Without
 * it the suite is skipped, so that `npm test` passes on a bare machine; its title says why.
 */
export const browserSuite = (title: string) => {
  const present = existsSync(CHROMIUM)
  const required = process.env.TEST_REQUIRE_CHROMIUM === "1"
  return {
    skip: !present && !required,
    title:
      present || required
        ? title
        : `${title}: skipped, ${CHROMIUM} is missing (apt-get install chromium; TEST_REQUIRE_CHROMIUM=1 makes this a failure)`,
    /** Fails the suite that CI requires when the browser is missing. */
    requirePresent: () => {
      if (!present) throw new Error(`TEST_REQUIRE_CHROMIUM=1 but ${CHROMIUM} is missing: apt-get install chromium`)
    }
  }
}

/** Headless Chromium with nothing reaching out to the network on its own. */
export const launchChromium = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

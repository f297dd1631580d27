// Writes docs/configuration.md from the settings' own descriptions (npm run docs).
import { writeFileSync } from "node:fs"
import { configurationReference } from "../config/reference.js"
import { describeSettings } from "../config/Settings.js"

writeFileSync(new URL("../docs/configuration.md", import.meta.url), configurationReference(describeSettings()))

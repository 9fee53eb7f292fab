// The prebuilt web UI as a package: `deerflow serve` (and the gateway) find the static files through this
// module's own location, so an installed package needs no repository around it.
import { fileURLToPath } from "node:url";

/** Absolute path of the built UI (`dist/`, holding `index.html` and `assets/`). */
export const webDistDir = fileURLToPath(new URL("./dist", import.meta.url));

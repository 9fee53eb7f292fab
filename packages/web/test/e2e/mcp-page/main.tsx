// Mounts McpPage alone, so its e2e test does not depend on the app's router.
import { createRoot } from "react-dom/client";
import "../../../src/styles.css";
import { McpPage } from "../../../src/pages/McpPage";

createRoot(document.getElementById("root")!).render(<McpPage onClose={() => (document.title = "closed")} />);

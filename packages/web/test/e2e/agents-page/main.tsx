// Mounts AgentsPage alone, so its e2e test does not depend on the app's router.
import { createRoot } from "react-dom/client";
import "../../../src/styles.css";
import { AgentsPage } from "../../../src/pages/AgentsPage";

createRoot(document.getElementById("root")!).render(
  <AgentsPage models={[{ name: "scripted", display_name: "Scripted" }]} onChat={(name) => (document.title = `chat:${name}`)} onClose={() => (document.title = "closed")} />,
);

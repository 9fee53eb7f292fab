// Mounts MemoryPage alone, so its e2e test does not depend on the app's router.
import { createRoot } from "react-dom/client";
import "../../../src/styles.css";
import { MemoryPage } from "../../../src/pages/MemoryPage";

createRoot(document.getElementById("root")!).render(<MemoryPage onClose={() => (document.title = "closed")} />);

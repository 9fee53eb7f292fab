import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Root } from "./app/Root";
import { installLoginRedirect } from "./auth/session";
import "./styles.css";

// Before anything renders: every 401 of the API from here on leads to the login page.
installLoginRedirect();
createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);

export { escapeXmlText, escapeXmlTextDeep } from "./escape";
export { boundText } from "./bound";
export {
  BLOCKED_TAGS,
  escapeFrameworkTags,
  frameUntrustedText,
  frameWebContent,
  NEUTRALIZED_BEGIN,
  NEUTRALIZED_END,
  neutralizeBoundaryMarkers,
  neutralizeUntrustedText,
  neutralizeWebContent,
  USER_INPUT_BEGIN,
  USER_INPUT_END,
  WEB_CONTENT_BEGIN,
  WEB_CONTENT_END,
} from "./prompt-tags";

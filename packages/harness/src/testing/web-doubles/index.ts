export { startDoubleServer, startPageServer, json as jsonReply } from "./server";
export type { RecordedWebRequest, WebDoubleFault, DoubleReply, DoubleHandler, WebDouble, PageRoute } from "./server";
export { startProviderDouble, DEFAULT_SEARCH_RESULTS, DEFAULT_IMAGE_RESULTS } from "./providers";
export type { WebDoubleProvider, ProviderDoubleOptions, DoubleSearchResult, DoubleImageResult } from "./providers";
export { buildTestPdf } from "./pdf";

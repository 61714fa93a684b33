// The read operations the routes use, one file per read (summary, events, URLs, timeseries).
export { listEvents, streamEventBatches } from "./events.ts";
export { summarize } from "./summary.ts";
export { timeseries } from "./timeseries.ts";
export { listUrls } from "./urls.ts";

import { readTiers } from "./src/domain/contracts/extraction/price-reading.js";
for (const t of [
  "API calls are billed per month: the first 10,000 API calls at $0.010 each, the next 40,000 at $0.008 each, and above 50,000 at $0.005 each.",
  "0 – 10,000 $0.010 10,001 – 50,000 $0.008 50,001+ $0.005",
  "First 1,000 messages: €0.05 per message; next 9,000: €0.04; over 10,000: €0.03. All units are priced at the tier reached (volume pricing).",
])
  console.log(JSON.stringify(readTiers(t)));

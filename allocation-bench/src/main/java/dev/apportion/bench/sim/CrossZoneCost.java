package dev.apportion.bench.sim;

/**
 * What cross-zone scrapes cost: each scrape of a target in one zone by a collector in another
 * moves {@code bytesPerScrape} across zones, {@code 3600 / scrapeIntervalSeconds} times an hour,
 * and public clouds charge inter-zone transfer per GB in each direction (out of one zone, into the
 * other), so one GB costs {@code 2 * pricePerGb}. A month is 730 hours.
 *
 * @param bytesPerScrape bytes one scrape transfers
 * @param scrapeIntervalSeconds seconds between two scrapes of one target
 * @param pricePerGb USD per GB (10^9 bytes), each way
 */
record CrossZoneCost(long bytesPerScrape, double scrapeIntervalSeconds, double pricePerGb) {
  static final double HOURS_PER_MONTH = 730;

  /**
   * Gigabytes crossing zones per hour.
   *
   * @param crossZoneScrapes targets scraped from another zone
   * @return GB per hour
   */
  double gigabytesPerHour(int crossZoneScrapes) {
    return crossZoneScrapes * (double) bytesPerScrape * (3600 / scrapeIntervalSeconds) / 1e9;
  }

  /**
   * USD per month for that transfer, both directions charged.
   *
   * @param crossZoneScrapes targets scraped from another zone
   * @return USD per month
   */
  double dollarsPerMonth(int crossZoneScrapes) {
    return gigabytesPerHour(crossZoneScrapes) * HOURS_PER_MONTH * 2 * pricePerGb;
  }
}

import * as Metrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { Effect, Metric } from "effect"

const residentMemory = Metric.gauge("process_resident_memory_bytes", {
  description: "Resident memory size in bytes."
})
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use, in bytes." })
const startTime = Metric.gauge("process_start_time_seconds", {
  description: "Start time of the process since the Unix epoch, in seconds."
})
const cpuSeconds = Metric.counter("process_cpu_seconds", {
  description: "User and system CPU time spent, in seconds.",
  incremental: true
})

const startedAt = Date.now() / 1000 - process.uptime()
/** The CPU time already added to the counter: Effect's counters only count up by increments. */
let cpuCounted = 0

/**
 * The process's own figures, read when scraped rather than sampled on a timer, so that they cost
 * nothing between scrapes.
 */
const sampleProcess = () => {
  const memory = process.memoryUsage()
  residentMemory.unsafeUpdate(memory.rss, [])
  heapUsed.unsafeUpdate(memory.heapUsed, [])
  startTime.unsafeUpdate(startedAt, [])
  const { user, system } = process.cpuUsage()
  const cpu = (user + system) / 1e6
  cpuSeconds.unsafeUpdate(cpu - cpuCounted, [])
  cpuCounted = cpu
}

/**
 * Every Effect metric of the process (the service's, the runtime's), rendered as Prometheus text
 * by OpenTelemetry's serializer over @effect/opentelemetry's reading of Effect's registry: counters
 * get their `_total`, histograms their buckets. No target_info or scope series: the scraper
 * labels its targets itself.
 */
export const prometheusText = Effect.map(Metrics.makeProducer, (producer) => {
  const serializer = new PrometheusSerializer("", false, undefined, true, true)
  return Effect.promise(async () => {
    sampleProcess()
    const { resourceMetrics } = await producer.collect()
    return serializer.serialize(resourceMetrics)
  })
}).pipe(Effect.provide(Resource.layerEmpty))

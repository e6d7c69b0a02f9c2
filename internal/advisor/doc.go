// Package advisor owns the hardware advice of `cairn advisor`: the Swift Advisor of the seeds
// (sampling the 1:N proxy:storage ratio, profiling c:cN curves, optimizing the third of
// capacity, throughput and cost) made a computation instead of a lab campaign.
//
// It owns, along its seams:
//   - the hardware catalog (catalog.go): node, disk and load-balancer types with prices, read
//     from YAML and validated, with an example catalog embedded;
//   - the per-request resource demands (demands.go): CPU seconds, network bytes and disk
//     operations per operation and size, versioned, with the machine they were measured on;
//   - the workload as the model sees it (workload.go): request classes (operation, size,
//     weight) from a bench workload, a workload file or a `cairn bench` JSON result;
//   - the performance model (model.go, queue.go): operational laws and queueing
//     approximations per resource of each tier, the load balancer as one more tier;
//   - the search (search.go, sweep.go): the configuration that optimizes the third constraint,
//     its runners-up, and the seeds' sampling and profiling curves;
//   - the report (report.go, html.go): the table, the JSON for scripts and the HTML charts.
//
// It is pure logic: the only I/O is reading the catalog, demands and workload files.
// Measuring demands on real processes is subpackage calibrate's; validating a recommendation
// on real processes is later work.
package advisor

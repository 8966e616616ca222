// Package telemetry is fabctl's continuous view of an RDMA fabric:
// Prometheus metrics of the hosts' NICs (HostCollector, served by
// `fabctl agent --metrics`) and of the switches (SwitchCollector, fed by
// gNMI Subscribe STREAM and served by `fabctl telemetry serve`), labelled
// from the spec (Labels: fabric, host, nic, rail, leaf, port), and the
// Prometheus alerting rules the spec implies (Rules). docs/telemetry.md
// describes the metrics, the counter semantics per NIC family and the
// alerts.
//
// It reads NIC counters with the code fabctl validate uses
// (validate/traffic.Snapshot) and switches through the gNMI transport
// (drivers/transport/gnmi); it never configures anything.
package telemetry

// Package gnmitarget is a gNMI target for tests and the local testbed: a
// real gRPC server (openconfig/gnmi v0.14.1 service definitions) that keeps
// a device's configuration as an RFC 7951 (JSON_IETF) tree and behaves the
// way a schema-validating switch does.
//
// Start it with Start(ctx, Config{...}); clients dial Target.Addr() over
// TLS (mandatory unless Config.Insecure) with username/password in gRPC
// metadata when Config.Username is set. NewTestPKI writes a CA, a server
// certificate for the given hosts and a client certificate for mTLS.
//
// RPCs:
//
//   - Capabilities: the loaded YANG modules (name, organization, revision)
//     when the target has models (Config.YANGDir or Config.Schema), else a
//     fixed list for the flavor; JSON_IETF (and JSON) encodings; gNMI
//     0.10.0; with Config.CommitConfirm an empty gnmi_ext.Commit extension
//     in CapabilityResponse.extension advertises commit-confirmed.
//   - Get: JSON_IETF (or JSON) values at prefix+path, keyed list elements
//     included (/interfaces/interface[name=Ethernet0]/config); a path whose
//     data does not exist is codes.NotFound. DataType CONFIG returns the
//     configuration only, STATE/OPERATIONAL the state only, ALL both.
//   - Set: deletes, then replaces, then updates (gNMI specification 3.4.3),
//     applied to a copy of the tree that is swapped in only when the whole
//     request succeeds: a rejected Set leaves the tree byte-identical. With
//     models, every operation is checked (path exists, is config, values
//     typed, list keys in the path agree with the value, deletes name
//     schema nodes) and so is the whole resulting tree (mandatory leaves,
//     leafrefs anywhere in the tree: a dangling reference is rejected).
//     Schema violations are codes.InvalidArgument whose message names each
//     path and reason; unknown origin/encoding InvalidArgument or
//     Unimplemented; with Config.SetLatency each Set takes that long
//     before it answers.
//   - Subscribe: modes ONCE, POLL and STREAM (subscribe.go: SAMPLE at
//     sample_interval, ON_CHANGE and TARGET_DEFINED sending a leaf when it
//     changes, heartbeat_interval, suppress_redundant, updates_only) over the
//     same data as Get with type ALL, state included: every interface has
//     oper-status and counters that grow on every read, so two polls
//     differ; Target.SetState overrides a state leaf (e.g. take a link
//     down).
//   - Link state (links.go): each interface's oper state, speed, FEC,
//     error and discard counters and LLDP neighbours come from
//     Config.Links (a testbed/portlink.Source, the testbed's cabling):
//     OpenConfig /interfaces/interface/state, .../ethernet/state and
//     /lldp/interfaces/interface/neighbors; SR Linux /interface and
//     /system/lldp/interface/neighbor. With models the interface state is
//     validated before it is served; the LLDP modules are not in the
//     loaded sets, so /lldp and /system/lldp are served as the vendors'
//     models draw them. A nil Source: every port down, no neighbour.
//   - Commit confirmed (Config.CommitConfirm, openconfig/reference
//     rpc/gnmi/gnmi-commit-confirmed.md): a Set carrying
//     Commit{id, commit{rollback_duration}} applies and arms a timer that
//     restores the configuration from before the Set unless a Set with
//     Commit{id, confirm} arrives in time; Commit{id, cancel} reverts at
//     once; set_rollback_duration re-arms. While a commit is pending, other
//     Sets are FailedPrecondition; a wrong id is InvalidArgument.
//
// Faults (Target.Inject) make the next RPCs fail with a code, drop the
// client's TCP connection in the middle of the RPC (optionally after the
// Set was applied, the hard case for a client), or hang until the client
// gives up.
//
// Flavors: FlavorOpenConfig (openconfig-interfaces/-qos,
// /interfaces/interface[name]/config, state under .../state) and
// FlavorSRLinux (srl_nokia-interfaces/-qos, /interface[name], state
// leaves beside config). The flavor decides the shape of the interfaces
// Config.Interfaces creates, where state lives and the fixed Capabilities
// list; with models, everything else follows the models.
package gnmitarget

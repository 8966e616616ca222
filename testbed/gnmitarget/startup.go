package gnmitarget

import (
	"context"
	"encoding/json"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/internal/jsontree"
	"github.com/fabctl/fabctl/yangval"
)

// An SR Linux device boots from its startup configuration, the JSON file
// /etc/opt/srlinux/config.json, and a save writes the running
// configuration to it (Nokia SR Linux configuration guide, config-basics
// "Configuration management": default configuration; tools datastore).
// The save is leaf save (type empty) of the tools datastore,
// /tools/system/configuration/save (nokia/srlinux-yang-models
// srl_nokia-tools-configuration.yang, grouping configuration-top,
// augmenting /srl_nokia-tools-system:system), sent as a gNMI Set update
// whose value is the empty type's JSON encoding [null] (RFC 7951 6.9).
//
// The target keeps a startup configuration: the initial one (Initial and
// Interfaces) at Start, the running one after each save. Reload boots
// from it, as a reboot does. Only the SR Linux flavor has the tools
// datastore: the OpenConfig models define no save, so an OpenConfig
// target's startup never changes. Not modelled: any other tools command
// (refused with Unimplemented), a tools update combined with
// configuration changes in one Set (refused: fabctl never sends one, and
// no source says how SR Linux treats it), and the save's own output.

// savePath is the tools datastore's save, as path elements.
var savePath = []string{"tools", "system", "configuration", "save"}

// toolsOp reports whether op addresses the tools datastore.
func toolsOp(op yangval.SetOp) bool {
	return len(op.Path) > 0 && op.Path[0].Name == "tools"
}

// isSave reports whether op is the save.
func isSave(op yangval.SetOp) bool {
	if op.Op != yangval.OpUpdate || len(op.Path) != len(savePath) {
		return false
	}
	for i, e := range op.Path {
		if e.Name != savePath[i] || len(e.Keys) > 0 {
			return false
		}
	}
	return true
}

// tools runs a Set of tools-datastore operations (ops holds at least one).
// FaultReject, FaultHang and FaultDrop injected with RPC "Save" hit the
// save (after its request is checked, before the startup is written).
func (t *Target) tools(ctx context.Context, req *gpb.SetRequest, ops []yangval.SetOp, results []*gpb.UpdateResult) (*gpb.SetResponse, error) {
	if t.cfg.Flavor != FlavorSRLinux {
		return nil, status.Errorf(codes.InvalidArgument, "%s: the %s models have no tools datastore", yangval.PathString(ops[0].Path), t.cfg.Flavor)
	}
	if len(ops) != 1 || !isSave(ops[0]) {
		for _, op := range ops {
			if !toolsOp(op) {
				return nil, status.Errorf(codes.InvalidArgument, "%s: a tools command and configuration changes in one Set are not supported by this target", yangval.PathString(op.Path))
			}
		}
		return nil, status.Errorf(codes.Unimplemented, "%s: tools command not modelled by this target (only %s)", yangval.PathString(ops[0].Path), "/"+joinNames(savePath))
	}
	if commitExt(req) != nil {
		return nil, status.Error(codes.InvalidArgument, "tools commands take no commit-confirmed extension")
	}
	if v, ok := ops[0].Value.([]any); !ok || len(v) != 1 || v[0] != nil {
		b, _ := json.Marshal(ops[0].Value)
		return nil, status.Errorf(codes.InvalidArgument, "%s: type empty: want [null], got %s", yangval.PathString(ops[0].Path), b)
	}
	if f := t.takeFault("Save"); f != nil {
		if err := t.runFault(ctx, f); err != nil {
			return nil, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.commitAction(nil, 0); err != nil {
		return nil, err // a confirmed commit awaits confirmation: nothing is saved before it is settled
	}
	t.startup = jsontree.DeepCopy(t.tree).(map[string]any)
	t.stats.Saves++
	return &gpb.SetResponse{Prefix: req.GetPrefix(), Response: results, Timestamp: time.Now().UnixNano()}, nil
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += "/"
		}
		out += n
	}
	return out
}

// Startup returns the startup configuration as Config does the running
// one.
func (t *Target) Startup() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return marshalTree(t.startup)
}

// Reload boots the target again: the running configuration becomes the
// startup configuration, and a confirmed commit awaiting confirmation is
// gone (its rollback state lived in the process that rebooted).
func (t *Target) Reload() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending != nil {
		t.pending.timer.Stop()
		t.pending = nil
	}
	t.tree = jsontree.DeepCopy(t.startup).(map[string]any)
	t.stats.Reloads++
}

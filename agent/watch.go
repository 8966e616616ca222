package agent

import (
	"context"
	"sync"

	"github.com/fabctl/fabctl/drivers/host"
)

// WatchFunc watches NICs in a network namespace ("" = the agent's own)
// until ctx ends, calling fn for each drift: host.WatchDCB and
// host.WatchDCBNetns (tests replace it).
type WatchFunc func(ctx context.Context, netns string, ifaces []string, fn func(host.Drift)) error

// WatchDCB is the WatchFunc of the host driver.
func WatchDCB(ctx context.Context, netns string, ifaces []string, fn func(host.Drift)) error {
	if netns == "" {
		return host.WatchDCB(ctx, ifaces, fn)
	}
	return host.WatchDCBNetns(ctx, netns, ifaces, fn)
}

// WatchEvent is one event of a watch (a line of agent --watch --json):
// a drift of one NIC, or a host whose watch could not run.
type WatchEvent struct {
	Host string `json:"host"`
	*host.Drift
	Error string `json:"error,omitempty"`
}

// Watch watches the RoCE NICs of every saved desired state at path (a
// file or a directory of them; SavedFiles) with watch until ctx ends,
// calling emit for every event, one at a time. The error says that path
// holds no saved state; ok is false when no watch could run (every host
// failed or had nothing to watch).
func Watch(ctx context.Context, path string, watch WatchFunc, emit func(WatchEvent)) (ok bool, err error) {
	files, err := SavedFiles(path)
	if err != nil {
		return false, err
	}
	var mu sync.Mutex
	send := func(e WatchEvent) {
		mu.Lock()
		defer mu.Unlock()
		emit(e)
	}
	var wg sync.WaitGroup
	var failed, started int
	for _, file := range files {
		req, err := LoadSaved(file)
		if err != nil {
			send(WatchEvent{Host: file, Error: err.Error()})
			mu.Lock()
			failed++
			mu.Unlock()
			continue
		}
		var ifaces []string
		for _, n := range req.Host.NICs {
			if n.RoCEMode != "" { // iWARP and InfiniBand NICs have no host DCB
				ifaces = append(ifaces, n.Name)
			}
		}
		if len(ifaces) == 0 {
			send(WatchEvent{Host: req.Host.Name, Error: "no RoCE NIC: nothing to watch"})
			continue
		}
		started++
		wg.Add(1)
		go func(name, ns string, ifaces []string) {
			defer wg.Done()
			err := watch(ctx, ns, ifaces, func(d host.Drift) { send(WatchEvent{Host: name, Drift: &d}) })
			if err != nil {
				send(WatchEvent{Host: name, Error: err.Error()})
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}(req.Host.Name, req.Netns, ifaces)
	}
	wg.Wait()
	return started > 0 && failed < started, nil
}

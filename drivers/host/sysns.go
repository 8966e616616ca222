package host

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The sysfs view of a network namespace.
//
// /sys/class/net lists the network devices of the namespace that mounted
// /sys, not of the reader: fabctl running in the root namespace sees the
// root namespace's NICs there even when it manages a host that is a
// network namespace, so a NIC inside the namespace has no sysfs directory
// (or, with the same name in both, the wrong one). Two ways out:
//
//   - /proc/<pid>/root/sys of a process living in the namespace: needs
//     such a process, and a namespace made with `ip netns add` has none;
//   - mount a sysfs from inside the namespace, in a private mount
//     namespace so the host's mounts are untouched. This is what
//     `ip netns exec` does (iproute2 lib/namespace.c netns_switch), and
//     what fabctl does: hostFS runs the sysfs and configfs work of a
//     namespace host on a dedicated OS thread that joined the network
//     namespace, unshared its mount namespace, made it a slave of the
//     host's (no mount events leak back) and mounted a fresh /sys.
//
// The thread stays locked to its goroutine and is never returned to the
// Go scheduler: when the goroutine ends, the runtime kills the thread
// with its namespaces. Child processes started from fn (ibv_devinfo)
// inherit the thread's namespaces, since Go forks from the calling thread.
//
// configfs (rdma_cm) is global, but it may not be mounted: the same
// private mount namespace lets fabctl mount it for its own use without
// changing the host's mount table. configfs has one superblock, so what
// is created or written through the private mount is what every mount
// shows.

// configfsMagic is CONFIGFS_MAGIC (include/uapi/linux/magic.h).
const configfsMagic = 0x62656570

// hostFS runs fn where sysRoot shows the host's own sysfs and cfgRoot
// configfs (when the kernel has it). For a local host whose configfs is
// mounted (or not needed) fn runs directly.
func (s *session) hostFS(needCfg bool, fn func() error) error {
	private := s.ns.IsOpen() || (needCfg && !cfgMounted())
	if !private || sysRoot != "/sys" { // unit tests read fixture trees
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// The main thread is never retired by the runtime (it is
			// wedged instead), and /proc/self shows its namespaces: hold
			// it here, so the work lands on another thread, and give it
			// back unchanged.
			inner := make(chan error, 1)
			go func() {
				runtime.LockOSThread() // never unlocked: see above
				inner <- enterHostFS(s.ns, needCfg, fn)
			}()
			errc <- <-inner
			runtime.UnlockOSThread()
			return
		}
		// No UnlockOSThread: see above.
		errc <- enterHostFS(s.ns, needCfg, fn)
	}()
	return <-errc
}

func enterHostFS(ns netns.NsHandle, needCfg bool, fn func() error) error {
	if ns.IsOpen() {
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("enter the network namespace: %w", err)
		}
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("private mount namespace for sysfs: unshare: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("private mount namespace for sysfs: make / a slave: %w", err)
	}
	if ns.IsOpen() {
		if err := unix.Unmount(sysRoot, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmount %s in the private mount namespace: %w", sysRoot, err)
		}
		if err := unix.Mount("sysfs", sysRoot, "sysfs", 0, ""); err != nil {
			return fmt.Errorf("mount the namespace's sysfs on %s: %w", sysRoot, err)
		}
	}
	if needCfg && !cfgMounted() {
		// ENODEV: no configfs in this kernel; the readers report rdma_cm
		// absent, which is the truth.
		_ = unix.Mount("configfs", cfgRoot, "configfs", 0, "")
	}
	return fn()
}

func cfgMounted() bool {
	var st unix.Statfs_t
	return unix.Statfs(cfgRoot, &st) == nil && st.Type == configfsMagic
}

package telemetry

// Test helpers for the external e2e test (package telemetry_test).
var (
	GNMIFabric = gnmiFabric
	FakeSysfs  = fakeSysfs
	MLX5HW     = mlx5HW
	TGPassword = tgPassword
	WaitFor    = waitFor
	Promtool   = promtool
)

// SSH CLI poll helpers (poll_test.go).
var (
	SSHFabric  = sshFabric
	PollFabric = pollFabric
)

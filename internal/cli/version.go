package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/internal/cli/view"
)

// Set at build time:
//
//	go build -ldflags "-X github.com/fabctl/fabctl/internal/cli.version=v0.3.0 \
//	  -X github.com/fabctl/fabctl/internal/cli.commit=$(git rev-parse HEAD)" ./cmd/fabctl
//
// Without them the module version and VCS revision stamped by the go tool
// are used (debug.ReadBuildInfo), else "dev" and "unknown".
var (
	version = ""
	commit  = ""
)

// BuildInfo describes this fabctl binary.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

func (b BuildInfo) String() string {
	return fmt.Sprintf("fabctl %s (commit %s, %s, %s)", b.Version, shortCommit(b.Commit), b.GoVersion, b.Platform)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// readBuildInfo combines the -ldflags variables with the build info the
// go tool records.
func readBuildInfo() BuildInfo {
	b := BuildInfo{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		if b.Commit == "" {
			dirty := false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					b.Commit = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if b.Commit != "" && dirty {
				b.Commit += "-dirty"
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// VersionOptions are the inputs of fabctl version.
type VersionOptions struct {
	IO   *IOStreams
	JSON bool
	// Build returns the build information (tests replace it).
	Build func() BuildInfo
}

// NewCmdVersion returns `fabctl version`.
func NewCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IOStreams, Build: readBuildInfo}
	return &cobra.Command{
		Use:   "version",
		Short: "Show the fabctl version",
		Long:  "Show fabctl's version, the commit it was built from, the Go version and the platform.",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

// versionJSON is the --json output of fabctl version.
type versionJSON struct {
	FormatVersion string `json:"format_version"`
	BuildInfo
}

func versionRun(opts *VersionOptions) error {
	b := opts.Build()
	if opts.JSON {
		return writeJSON(opts.IO.Out, versionJSON{FormatVersion: jsonFormatVersion, BuildInfo: b})
	}
	_, err := fmt.Fprintln(opts.IO.Out, b.String())
	return err
}

// jsonFormatVersion is the format_version of every --json document
// (view.JSONFormatVersion).
const jsonFormatVersion = view.JSONFormatVersion

// writeJSON writes v as indented JSON and a newline, without HTML
// escaping (details quote "<reason>" and "a->b").
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

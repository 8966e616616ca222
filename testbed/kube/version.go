// Package kube is the test-only nested module that builds kube-apiserver from the Go module proxy
// for the Kubernetes engine e2e (testbed/kubetb, make e2e-kube). See build.sh and gen-gomod.sh.
package kube

// Version is the Kubernetes release that build.sh builds; gen-gomod.sh reads it.
const Version = "v1.37.2"

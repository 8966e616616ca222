//go:build !(linux && cgo)

package ibmad

import (
	"errors"
	"os"
)

// OpenPort needs libibumad through cgo: this fabctl was built without it.
func OpenPort() (Port, error) {
	return nil, errors.New("this fabctl was built without cgo: it has no MAD client (build it with CGO_ENABLED=1 on Linux)")
}

// Exit is os.Exit: without cgo there is no C library to clean up.
func Exit(code int) { os.Exit(code) }

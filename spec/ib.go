package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseGUID parses an InfiniBand GUID as tools print it: "0x0c42a10300000b01"
// (ibstat -p, opensm), "0c42:a103:0000:0b01" (ibv_devinfo, sysfs node_guid)
// or 16 bare hex digits, and returns the canonical form: "0x" and 16
// lower-case hex digits, the form opensm's partitions.conf takes.
func ParseGUID(s string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	h = strings.TrimPrefix(h, "0x")
	if strings.Contains(h, ":") {
		parts := strings.Split(h, ":")
		if len(parts) != 4 {
			return "", errors.New("has the wrong number of ':' groups (want four groups of four hex digits)")
		}
		for _, p := range parts {
			if len(p) != 4 {
				return "", errors.New("needs four hex digits in each ':' group")
			}
		}
		h = strings.Join(parts, "")
	}
	if h == "" || len(h) > 16 {
		return "", errors.New("is not a 64-bit hex number")
	}
	v, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return "", errors.New("is not a 64-bit hex number")
	}
	if v == 0 {
		return "", errors.New("is zero, which no port has")
	}
	return fmt.Sprintf("0x%016x", v), nil
}

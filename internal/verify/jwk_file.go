package verify

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// CheckKeyFile reads and checks a file of pinned keys as New reads it
// (see Config.AgentKeys), so that a configuration adapter can report a
// missing or malformed file when the configuration is adapted, before any
// verifier is built. The error names the file and, for a JSON error, the
// line and column.
func CheckKeyFile(path string) error {
	_, err := readKeyFile(path)
	return err
}

// readKeyFile reads a file of pinned keys: a regular file (a FIFO or a
// device could block or never end), at most maxDirectorySize octets, the
// bound a fetched directory has.
func readKeyFile(path string) (map[string]dirKey, error) {
	if path == "" {
		return nil, errors.New("keys file: empty path")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("keys file %s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, maxDirectorySize+1))
	if err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	if len(body) > maxDirectorySize {
		return nil, fmt.Errorf("keys file %s: larger than %d octets", path, maxDirectorySize)
	}
	keys, err := parsePinnedKeys(body)
	if err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	return keys, nil
}

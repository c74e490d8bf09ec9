package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/droverhq/drover/structs"
)

// serverIDFile is the file under the data directory that keeps the ID.
const serverIDFile = "server-id"

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// LoadOrCreateServerID returns the server ID kept in dataDir/server-id,
// minting a UUID and writing it there on first use. A file that does not
// hold a UUID is an error: the ID is the server's identity in the Raft
// configuration and must never change silently.
func LoadOrCreateServerID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, serverIDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if !uuidPattern.MatchString(id) {
			return "", fmt.Errorf("server ID file %s does not hold a UUID: %q", path, id)
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("reading server ID: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("creating data directory: %w", err)
	}
	id := structs.GenerateUUID()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("writing server ID: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("writing server ID: %w", err)
	}
	return id, nil
}

package client

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/droverhq/drover/client/fingerprint"
	"github.com/droverhq/drover/structs"
)

// NodeIDPath is where the node's ID is kept under the data dir, so that a
// restarted client is the same node.
func NodeIDPath(dataDir string) string { return filepath.Join(dataDir, "client", "node-id") }

// NodeSecretPath is where the node's secret is kept under the data dir
// (mode 0600): the client presents it on every call to the servers
// (X-Nomad-Token), and the servers, which keep its hash, let only this
// node act as the node. It never leaves the machine otherwise.
func NodeSecretPath(dataDir string) string { return filepath.Join(dataDir, "client", "node-secret") }

// loadNodeID reads the node's ID, or mints and saves one.
func loadNodeID(dataDir string) (string, error) { return loadUUID(NodeIDPath(dataDir)) }

// loadNodeSecret reads the node's secret, or mints and saves one.
func loadNodeSecret(dataDir string) (string, error) { return loadUUID(NodeSecretPath(dataDir)) }

// loadUUID reads the UUID kept at path, or mints one and saves it there
// (mode 0600).
func loadUUID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		id := strings.TrimSpace(string(b))
		if validUUID(id) {
			return id, nil
		}
		// What the file holds is not repeated: it may be a secret.
		return "", fmt.Errorf("%w: %s does not hold a UUID", ErrInvalidConfig, path)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	id := structs.GenerateUUID()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return id, nil
}

// validUUID checks the 8-4-4-4-12 hex form.
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// buildNode fingerprints the machine and returns the node to register.
func buildNode(cfg Config, id string) *structs.Node {
	fp := fingerprint.Node(fingerprint.Input{
		DataDir: cfg.DataDir, CPUTotalMHz: cfg.CPUTotalMHz, MemoryTotalMB: cfg.MemoryTotalMB,
		MinDynamicPort: cfg.MinDynamicPort, MaxDynamicPort: cfg.MaxDynamicPort,
		Version: cfg.Version, Drivers: cfg.Drivers, Now: cfg.Clock.Now,
	})
	return &structs.Node{
		ID: id, Name: cfg.NodeName, Datacenter: cfg.Datacenter, HTTPAddr: cfg.HTTPAddr,
		NodeClass: cfg.NodeClass, NodePool: cfg.NodePool,
		Attributes: fp.Attributes, Meta: maps.Clone(cfg.Meta),
		NodeResources: fp.Resources, ReservedResources: &structs.NodeReservedResources{},
		Drivers:               fp.Drivers,
		HostVolumes:           hostVolumes(cfg.HostVolumes),
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
	}
}

// hostVolumes copies the configured host volumes for the node.
func hostVolumes(m map[string]*structs.ClientHostVolumeConfig) map[string]*structs.ClientHostVolumeConfig {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*structs.ClientHostVolumeConfig, len(m))
	for name, hv := range m {
		out[name] = &structs.ClientHostVolumeConfig{Name: name, Path: hv.Path, ReadOnly: hv.ReadOnly}
	}
	return out
}

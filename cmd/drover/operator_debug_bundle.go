package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// The bundle of operator debug: its files, their manifest and the
// archive (operator_debug.go captures what goes in it).

// create makes DIR/FILE in the bundle and lists it in the manifest.
func (d *debugRun) create(dir, file string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Join(d.dir, dir), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(d.dir, dir, file))
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.manifest = append(d.manifest, filepath.ToSlash(filepath.Join(dir, file)))
	d.mu.Unlock()
	return f, nil
}

func (d *debugRun) writeFile(dir, file string, b []byte) error {
	f, err := d.create(dir, file)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeJSON writes v, or {"Error": apiErr} when the request failed, as
// indented JSON.
func (d *debugRun) writeJSON(dir, file string, v any, apiErr error) {
	if apiErr != nil {
		v = struct{ Error string }{apiErr.Error()}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = d.writeFile(dir, file, append(b, '\n'))
	}
	if err != nil {
		d.warn("%s/%s: %v", dir, file, err)
	}
}

// flagsDoc is cluster/cli-flags.json: the capture's settings.
func (d *debugRun) flagsDoc() map[string]any {
	return map[string]any{
		"duration": d.o.duration.String(), "interval": d.o.interval.String(),
		"log-level": d.o.logLevel, "log-include-location": d.o.logIncludeLocation,
		"max-nodes": d.o.maxNodes, "node-class": d.o.nodeClass, "node-id": d.o.nodeIDs,
		"server-id": d.o.serverIDs, "stale": d.o.stale, "output": d.o.output,
		"pprof-duration": d.o.pprofDuration.String(), "pprof-interval": d.o.pprofInterval.String(),
		"event-topic": d.o.topics, "event-index": d.o.eventIndex, "verbose": d.o.verbose,
	}
}

// writeManifest writes index.json, the sorted list of the bundle's files.
func (d *debugRun) writeManifest() {
	d.mu.Lock()
	files := append([]string(nil), d.manifest...)
	d.mu.Unlock()
	sort.Strings(files)
	b, _ := json.MarshalIndent(files, "", "  ")
	if err := os.WriteFile(filepath.Join(d.dir, "index.json"), append(b, '\n'), 0o644); err != nil {
		d.warn("index.json: %v", err)
	}
}

// debugArchive writes src's regular files to a gzipped tar at archive,
// each named under prefix/.
func debugArchive(archive, src, prefix string) (err error) {
	fh, err := os.Create(archive)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
	}()
	zw := gzip.NewWriter(fh)
	tw := tar.NewWriter(zw)
	err = filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(filepath.Join(prefix, rel))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"

	"github.com/droverhq/drover/drivers/docker/internal/rootfs"
)

// The pause image: what a pause container runs (pause.go). No registry
// need be reachable: the default image is built on the client that needs
// it, from the host's static busybox (Debian's busybox-static), the way
// the tests build theirs (drivers/docker/dockertest).
const (
	// PauseImageVersion changes whenever the pause image does.
	PauseImageVersion = "1"
	// DefaultInfraImage is the default infra_image: drover's own pause
	// image, built locally on demand.
	DefaultInfraImage = "drover/pause:" + PauseImageVersion
	// DefaultInfraImagePullTimeout bounds the pull of another
	// infra_image (Nomad's infra_image_pull_timeout default).
	DefaultInfraImagePullTimeout = 5 * time.Minute
	// PauseLabel marks the images drover builds as its pause image.
	PauseLabel = "io.drover.pause"
)

// pauseScript is the pause container's process: it sleeps until it is
// sent SIGTERM (or SIGINT), then exits 0. As the container's PID 1 it
// must catch the signal itself: the kernel drops signals an init does
// not handle.
const pauseScript = `trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done`

// pauseBusybox is the busybox the pause image is built from.
var pauseBusybox = rootfs.BusyboxPath

// PauseRootfs is the pause image's file system as a tar archive:
// busybox with its sh and sleep, and an empty /tmp.
func PauseRootfs(busybox []byte) ([]byte, error) {
	entries := rootfs.Busybox(busybox, []string{"sh", "sleep"})
	entries = append(entries, rootfs.Dir("tmp/", 0o1777))
	return rootfs.Tar(entries)
}

// pauseImageChanges are the Dockerfile instructions applied to the
// imported file system.
func pauseImageChanges() []string {
	cmd, _ := json.Marshal([]string{"/bin/sh", "-c", pauseScript})
	return []string{"ENV PATH=/bin", "CMD " + string(cmd), "LABEL " + PauseLabel + "=" + PauseImageVersion}
}

// ensureInfraImage makes sure the infra_image is present: the default
// one is built here when missing, another one pulled (within
// infra_image_pull_timeout), as Nomad pulls its infra_image only when it
// is missing.
func (d *Driver) ensureInfraImage(ctx context.Context) error {
	d.infraMu.Lock()
	defer d.infraMu.Unlock()
	ref := d.opts.InfraImage
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	_, err := d.client.ImageInspect(ictx, ref)
	cancel()
	if err == nil {
		return nil
	}
	if !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("inspecting infra_image %q: %w", ref, err)
	}
	if ref == DefaultInfraImage {
		return d.buildPauseImage(ctx, ref)
	}
	pctx, cancel := context.WithTimeout(ctx, d.opts.InfraImagePullTimeout)
	defer cancel()
	if err := d.pull(pctx, ref, nil); err != nil {
		if pctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = fmt.Errorf("no progress within infra_image_pull_timeout %s", d.opts.InfraImagePullTimeout)
		}
		return fmt.Errorf("failed to pull infra_image %q: %w", ref, err)
	}
	return nil
}

// buildPauseImage imports the pause image under tag (DefaultInfraImage)
// from the host's busybox.
func (d *Driver) buildPauseImage(ctx context.Context, tag string) error {
	bin, err := os.ReadFile(pauseBusybox)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("building the pause image %s needs %s (Debian's package busybox-static), which this host lacks; install it, or set the docker plugin's infra_image to an image of your own",
				tag, pauseBusybox)
		}
		return fmt.Errorf("building the pause image %s: %w", tag, err)
	}
	tarball, err := PauseRootfs(bin)
	if err != nil {
		return err
	}
	ictx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rc, err := d.client.ImageImport(ictx, image.ImportSource{Source: bytes.NewReader(tarball), SourceName: "-"}, tag,
		image.ImportOptions{Changes: pauseImageChanges()})
	if err != nil {
		return fmt.Errorf("building the pause image %s: %w", tag, err)
	}
	defer rc.Close()
	if err := pullErr(rc); err != nil {
		return fmt.Errorf("building the pause image %s: %w", tag, err)
	}
	_, _ = io.Copy(io.Discard, rc)
	d.logger.Info("built the pause image", "image", tag, "from", pauseBusybox)
	return nil
}

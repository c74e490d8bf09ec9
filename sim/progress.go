package sim

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Bar renders a progress bar of width cells for done out of total, such
// as "[#####-----]  50%". A total of 0 or less renders empty.
func Bar(width, done, total int) string {
	if width < 1 {
		width = 1
	}
	frac := 0.0
	if total > 0 {
		frac = float64(max(0, min(done, total))) / float64(total)
	}
	full := int(frac * float64(width))
	return "[" + strings.Repeat("#", full) + strings.Repeat("-", width-full) + "]" + fmt.Sprintf(" %3d%%", int(frac*100))
}

// Progress is a single status line redrawn in place (carriage return,
// then the line padded over the previous one). Safe for concurrent use;
// a nil *Progress draws nothing.
type Progress struct {
	w     io.Writer
	start time.Time

	mu   sync.Mutex
	last int // length of the last line drawn
}

// NewProgress returns a line drawn on w; nil w draws nothing.
func NewProgress(w io.Writer) *Progress {
	if w == nil {
		return nil
	}
	return &Progress{w: w, start: time.Now()}
}

// Draw redraws the line: the label, a bar for done/total, the counts and
// the time since the Progress was made.
func (p *Progress) Draw(label string, done, total int) {
	if p == nil {
		return
	}
	line := fmt.Sprintf("%-12s %s %d/%d  %s", label, Bar(30, done, total), done, total,
		time.Since(p.start).Truncate(100*time.Millisecond))
	p.mu.Lock()
	defer p.mu.Unlock()
	pad := ""
	if n := p.last - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.last = len(line)
	fmt.Fprint(p.w, "\r"+line+pad)
}

// Done ends the line with a newline, so that what follows starts on its
// own line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last > 0 {
		fmt.Fprintln(p.w)
		p.last = 0
	}
}

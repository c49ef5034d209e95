package wire

import (
	"bytes"
	"io"
	"testing"
)

// offerRecorder is a reader that hands out data chunk by chunk and records
// how large a buffer each Read offered.
type offerRecorder struct {
	chunks   [][]byte
	received int // bytes handed out so far
	worst    int // the largest len(p) offered, beyond what the data justified
}

func (r *offerRecorder) Read(p []byte) (int, error) {
	// A buffer may run a chunk ahead of what has arrived: more means
	// memory ran ahead of the bytes received.
	if limit := r.received + readChunkLen; r.received+len(p) > limit {
		r.worst = max(r.worst, r.received+len(p))
	}
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	r.received += n
	return n, nil
}

// TestReadFullGrowsWithData: a frame that announces 64 KiB is buffered as
// its bytes arrive, never ahead of them by more than a chunk.
func TestReadFullGrowsWithData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		chunks []int
		want   error
	}{
		{"announced max, 10 bytes sent", MaxMessageFrameLen, []int{10}, io.ErrUnexpectedEOF},
		{"announced max, 5 KiB sent", MaxMessageFrameLen, []int{1000, 4000, 120}, io.ErrUnexpectedEOF},
		{"announced max, nothing sent", MaxMessageFrameLen, nil, io.EOF},
		{"whole, in small chunks", 20000, []int{1, 100, 3000, 6899, 10000}, nil},
		{"whole, in one chunk", MaxMessageFrameLen, []int{MaxMessageFrameLen}, nil},
		{"small", 15, []int{15}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			r := &offerRecorder{}
			for i, n := range tc.chunks {
				c := bytes.Repeat([]byte{byte(i)}, n)
				data = append(data, c...)
				r.chunks = append(r.chunks, c)
			}
			got, err := readFull(r, tc.n)
			if err != tc.want {
				t.Fatalf("readFull = %v, want %v", err, tc.want)
			}
			if r.worst != 0 {
				t.Errorf("offered a buffer reaching byte %d having received %d", r.worst, r.received)
			}
			if err == nil && !bytes.Equal(got, data) {
				t.Errorf("read %d bytes, not the %d sent", len(got), len(data))
			}
		})
	}
}

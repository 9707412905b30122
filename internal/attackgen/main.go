// Command attackgen writes hostile Parquet files for the h-attack2 pass.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"stratbench/internal/pqcraft"
)

func bars(n uint64, sym string, t0 int64) []byte {
	ts := pqcraft.Chunk{NumValues: int64(n), Pages: [][]byte{
		pqcraft.DataPage(int32(n), pqcraft.DeltaBP, nil, pqcraft.DeltaRange(t0, int64(time.Minute), n, 1<<16)),
	}}
	price := pqcraft.ConstChunk(n, pqcraft.PlainDouble(10))
	return pqcraft.File(pqcraft.BarColumns, []pqcraft.Group{{Rows: int64(n), Chunks: []pqcraft.Chunk{
		ts, pqcraft.ConstChunk(n, pqcraft.PlainStrings(sym)), price, price, price, price, pqcraft.ConstChunk(n, pqcraft.PlainDouble(0)),
	}}})
}

func main() {
	switch os.Args[1] {
	case "folder": // folder DIR K N
		k, _ := strconv.Atoi(os.Args[3])
		n, _ := strconv.ParseUint(os.Args[4], 10, 64)
		os.MkdirAll(os.Args[2], 0o755)
		for i := range k {
			sym := fmt.Sprintf("S%05d", i)
			if err := os.WriteFile(filepath.Join(os.Args[2], sym+".parquet"), bars(n, sym, pqcraft.T0.UnixNano()), 0o644); err != nil {
				panic(err)
			}
		}
	case "one": // one FILE N
		n, _ := strconv.ParseUint(os.Args[3], 10, 64)
		os.WriteFile(os.Args[2], bars(n, "X", pqcraft.T0.UnixNano()), 0o644)
	}
}

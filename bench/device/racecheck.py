"""The stacked upload's copies on the consumer's stream, shown to matter:
the GPU test with the copies on the pinned pool's own stream (the old way)
must fail. python3 bench/device/racecheck.py"""
from glint.io import transfer
import tests.test_scan_io as t

t.test_stacked_upload_never_overwrites_memory_the_compute_stream_still_reads()
print("copies on the consumer's stream: passed")
init = transfer.StackedUpload.__init__


def old_init(self, pool, memory, cols, stream=None):
    init(self, pool, memory, cols, stream)
    self.copy_stream = pool.stream


transfer.StackedUpload.__init__ = old_init
try:
    t.test_stacked_upload_never_overwrites_memory_the_compute_stream_still_reads()
    print("copies on the pool's stream: passed (the race did not show)")
except AssertionError:
    print("copies on the pool's stream: failed, as expected (the race)")
finally:
    transfer.StackedUpload.__init__ = init

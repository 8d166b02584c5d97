"""The stacked upload's wait for the compute stream, shown to matter:
the GPU test with the wait disabled must fail. python3 bench/device/racecheck.py"""
import torch

import tests.test_scan_io as t

real = torch.cuda.Stream.wait_event
t.test_stacked_upload_never_overwrites_memory_the_compute_stream_still_reads()
print("with the wait: passed")
torch.cuda.Stream.wait_event = lambda self, ev: None
try:
    t.test_stacked_upload_never_overwrites_memory_the_compute_stream_still_reads()
    print("without the wait: passed (the race did not show)")
except AssertionError as e:
    print("without the wait: failed as expected:", str(e).splitlines()[0][:120])
finally:
    torch.cuda.Stream.wait_event = real

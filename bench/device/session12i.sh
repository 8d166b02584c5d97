# usage (on the device): bash bench/device/session12i.sh -- chunks ramped up (GLINT_CHUNK_RAMP 0, 3): 22 cold
# SF 10 queries and 5 cold SF 100 queries, twice each
source bench/device/setup.sh
tpch_data 10 100
for i in 1 2; do
    cold_sf10 coldpass10_ramp.log GLINT_CHUNK_RAMP=0
    cold_sf10 coldpass10_ramp.log GLINT_CHUNK_RAMP=3
done
for i in 1 2; do
    cold_sf100 coldpass100_ramp.log GLINT_CHUNK_RAMP=0
    cold_sf100 coldpass100_ramp.log GLINT_CHUNK_RAMP=3
done

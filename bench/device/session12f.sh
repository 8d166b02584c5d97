# usage (on the device): bash bench/device/session12f.sh -- 5 cold SF 100 queries: chunks started ahead of the
# decoding (GLINT_UPLOAD_AHEAD 1, 2), staging threads (8, 16)
source bench/device/setup.sh
tpch_data 100
cold_sf100 coldpass100_ahead.log GLINT_UPLOAD_AHEAD=1
cold_sf100 coldpass100_ahead.log GLINT_UPLOAD_AHEAD=2
cold_sf100 coldpass100_ahead.log GLINT_UPLOAD_AHEAD=2 GLINT_STAGING_THREADS=16
cold_sf100 coldpass100_ahead.log GLINT_UPLOAD_AHEAD=3 GLINT_STAGING_THREADS=12
cold_sf100 coldpass100_ahead.log GLINT_UPLOAD_AHEAD=1
cold_sf100 coldpass100_ahead.log GLINT_UPLOAD_AHEAD=2

import glint, duckdb, pyarrow as pa, decimal, random, sys
random.seed(1)
n = 200_000
D = decimal.Decimal
t = pa.table({
 "g": pa.array([random.choice("ABNR") for _ in range(n)]),
 "p": pa.array([D(random.randint(4*10**10, 5*10**10))/100 for _ in range(n)], pa.decimal128(15, 2)),
 "d": pa.array([D(random.randint(0, 10))/100 for _ in range(n)], pa.decimal128(15, 2)),
 "x": pa.array([D(random.randint(0, 8))/100 for _ in range(n)], pa.decimal128(15, 2)),
})
q = """select g, sum(p) sp, sum(p*(1-d)) sdp, sum(p*(1-d)*(1+x)) sc, avg(p) ap, avg(d) ad, count(*) c
from t group by g order by g"""
dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
for kw in [{}, {"chunk_rows": 1<<14}, {"chunk_rows": 1<<14, "gpu_memory_limit": "64MB"}]:
    con = glint.connect(device=dev, **kw); con.register("t", t)
    got = con.sql(q).arrow()
    exp = duckdb.sql(q).arrow().read_all()
    print(kw, got.to_pylist() == exp.to_pylist())
    if got.to_pylist() != exp.to_pylist():
        print(got.to_pylist()[:1]); print(exp.to_pylist()[:1])

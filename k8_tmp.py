import time, numpy as np, sys
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
import pdpboot.engine.tree as T
n=int(sys.argv[1]); d=int(sys.argv[2])
X,y=make_friedman1(n_samples=n,n_features=10,noise=1.0,random_state=0)
est=RandomForestRegressor(100,random_state=0,n_jobs=1).fit(X,y)
g=[np.quantile(X[:,j],np.linspace(.05,.95,50)) for j in range(d)]
p=T.PreparedTrees(est,X,"predict"); plan=p.plan(tuple(range(d)),g)
K=T._kernel(); tab=plan.boxes; m=p.model
g0,g1=tab.dims()
v,nodes=K.plan_stats(tab.nodes,m.cover,m.roots,g0,g1,float(n))
v2,nodes2=K.plan_stats(tab.nodes,m.cover,m.roots[::12].copy(),g0,g1,float(n))
p.partial_dependence(plan)
ts=[]
for r in range(5):
  t=time.process_time(); p.partial_dependence(plan); ts.append(time.process_time()-t)
t=np.median(ts)
print(f"n={n} d={d} visits/row {v:.0f} (sample {v2*12:.0f}) nodes {nodes:.0f} ({nodes2*12:.0f}) pd {t:.4f} ns/visit {t/(v*n)*1e9:.2f} est {plan.tree_cost:.4f} brute est {plan.brute_cost:.3f} expdepth {p._depth:.0f}")

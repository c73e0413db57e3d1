import time, numpy as np, sys
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
import pdpboot.engine.tree as T
n=int(sys.argv[1])
X,y=make_friedman1(n_samples=n,n_features=10,noise=1.0,random_state=0)
est=RandomForestRegressor(100,random_state=0,n_jobs=1).fit(X,y)
g=[np.quantile(X[:,0],np.linspace(.05,.95,50))]
p=T.PreparedTrees(est,X,"predict"); plan=p.plan((0,),g)
X32=X.astype(np.float32)
t=time.process_time(); 
for i in range(3): est.apply(X32)
print("apply", (time.process_time()-t)/3)
for ch in [1,4096,16384,10**9]:
  T._KERNEL_CHUNK_NODES=ch
  w=T._KernelWalk(p.model,plan.s_cols,plan.boxes,len(p.levels))
  w.leaf_weights(p.xa,None,plan.boxes.local,len(plan.boxes.leaves))
  t=time.process_time(); 
  for i in range(3): lw=w.leaf_weights(p.xa,None,plan.boxes.local,len(plan.boxes.leaves))
  print(ch, len(w.chunks), "lw",(time.process_time()-t)/3)

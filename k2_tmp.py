import time, numpy as np, sys
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
import pdpboot.engine.tree as T
n=int(sys.argv[1])
X,y=make_friedman1(n_samples=n,n_features=10,noise=1.0,random_state=0)
est=RandomForestRegressor(100,random_state=0,n_jobs=1).fit(X,y)
g=[np.quantile(X[:,0],np.linspace(.05,.95,50))]
p=T.PreparedTrees(est,X,"predict"); plan=p.plan((0,),g)
for rep in range(2):
  t=time.process_time(); w=T._KernelWalk(p.model,plan.s_cols,plan.boxes,len(p.levels)); print("init",time.process_time()-t)
  t=time.process_time(); lw=w.leaf_weights(p.xa,None,plan.boxes.local,len(plan.boxes.leaves)); print("lw",time.process_time()-t)
out=np.zeros(n,dtype=np.int64)
w.kern.visits(w.feat,w.thr,w.left,w.right,w.miss,w.cat_row,w.cat_left,w.roots,p.xa,out)
print("visits per row-tree", out.mean()/100, "leaves per row-tree", lw.sum()/n/100, "nodes/tree", len(p.model.feature)/100, "levels", len(p.levels))

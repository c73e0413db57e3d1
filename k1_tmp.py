import time, numpy as np, sys
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits
import pdpboot.engine.tree as T
from pdpboot.engine import compute_pd
n=int(sys.argv[1]); trees=int(sys.argv[2]) if len(sys.argv)>2 else 100
X,y=make_friedman1(n_samples=n,n_features=10,noise=1.0,random_state=0)
est=RandomForestRegressor(trees,random_state=0,n_jobs=1).fit(X,y)
g=[np.quantile(X[:,0],np.linspace(.05,.95,50))]
g2=[g[0],np.quantile(X[:,1],np.linspace(.05,.95,50))]
with threadpool_limits(1):
  for rep in range(2):
    t=time.process_time(); p=T.PreparedTrees(est,X,"predict"); tp=time.process_time()-t
    t=time.process_time(); plan=p.plan((0,),g); tpl=time.process_time()-t
    t=time.process_time(); a,_=p.partial_dependence(plan); tk=time.process_time()-t
    print(plan.walk, f"prep {tp:.3f} plan {tpl:.3f} pd {tk:.3f} est tree {plan.tree_cost:.3f} brute {plan.brute_cost:.3f}")
    t=time.process_time(); plan2=p.plan((0,1),g2); a2,_=p.partial_dependence(plan2); print("2d", time.process_time()-t, plan2.tree_cost, plan2.brute_cost)
  t=time.process_time(); b,_=compute_pd(est,X,(0,),g,response_method="predict",method="brute"); tb=time.process_time()-t
  print("brute",tb, np.abs(a-b).max())
  t=time.process_time(); a3,ice=p.partial_dependence(plan, individual=True); print("ice", time.process_time()-t, np.abs(a3-b).max(), np.abs(ice.mean(0)-b).max())
